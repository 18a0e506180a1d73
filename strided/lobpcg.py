"""``strided.lobpcg``: a few extreme eigenpairs of a symmetric positive definite (generalized) eigenproblem
``A x = lambda B x`` by LOBPCG, with torch.lobpcg's arguments and results.

Note [LOBPCG]
Knyazev's locally optimal block preconditioned conjugate gradient method. The ``n`` columns of X (``n >= k``) are
improved at every step by the Rayleigh-Ritz procedure on the span of X, of the preconditioned residuals
``W = iK (A X - B X diag(E))`` and of the previous search directions P; the ``n`` Ritz pairs at the wanted end of the
spectrum become the new X and E, and P the part of the new X outside the old one. The leading pairs whose residual
passes the backward-stable test of Duersch et al. (2018, sec. 4.3), ``|r| < tol (|A| + |E| |B|) |x|`` with |A| and |B|
estimated once from the first X, are soft-locked: they stay in X but their residuals and directions leave the basis.
It stops when ``k`` pairs have converged, after ``niter`` updates (``-1``: never), or when the tracker sets
``bvars["force_stop"]``.

``method="ortho"`` (the default) keeps the basis B-orthonormal (Stathopoulos and Wu 2002; Duersch et al. 2018): W and
P are B-orthogonalized against the columns before them by block Gram-Schmidt, repeated until the residual
orthogonality passes ``ortho_tol`` (at most ``ortho_i_max`` passes), then B-orthonormalized among themselves by SVQB,
which drops the directions whose Gram eigenvalue falls below ``ortho_tol_drop`` relative to the largest -- so the
Rayleigh-Ritz step is a standard symmetric eigenproblem (``linalg.eigh``). ``method="basic"`` (Knyazev 2001) solves
the generalized Rayleigh-Ritz problem on the raw basis through a Cholesky factor of its Gram matrix, which fails on a
nearly dependent basis. Every step is strided ops on A's device; a batch is solved matrix by matrix. The random
start (no X given) is drawn from the default generator, as torch's, with ``strided.randn``.

Note [LOBPCG backward]
As torch's: when A requires grad it is symmetrized first (``(A + A^T) / 2``, so ``A.grad`` is symmetric), and the
k computed pairs (E, U) are differentiated as a partial eigendecomposition: with ``C = U^T gU``,
``gA = U (diag(gE) + C * F) U^T - Y U^T``, ``F[j, i] = 1 / (E_i - E_j)`` off the diagonal, and column i of Y the
solution in the complement of span(U) of ``(A - E_i) y = (I - U U^T) gU_i`` -- the part of the eigenvector
derivative outside the computed eigenspace, solved with ``A - E_i + s U U^T`` (the shift s makes the matrix regular
on span(U) and leaves the complement alone). It needs the k eigenvalues distinct and separated from the rest of the
spectrum, as any eigenvector derivative does. A generalized problem (B given) has no backward, in torch's words.
"""

from __future__ import annotations

from .autograd.function import Function
from .dispatch.argument_checks import arg_tensor, check_args
from .tensor import Tensor

__all__ = ["lobpcg", "LOBPCG"]


def _bmm(M, V):
    """``M @ V`` where ``M`` None stands for the identity."""
    return V if M is None else M @ V


class LOBPCG:
    """The iteration a ``tracker`` sees (torch's LOBPCG worker): inputs ``iparams`` / ``fparams`` / ``bparams``
    (integer, float and boolean), iteration variables ``ivars`` (``istep``, ``converged_count``,
    ``iterations_left``...), ``fvars`` (``A_norm``, ``B_norm``, ``X_norm``), ``bvars`` (``force_stop``), ``tvars``
    (``rerr``), the inputs ``A``, ``B``, ``iK`` and ``E``, ``X``, ``S`` (the last basis), ``R`` (the residual)."""

    def __init__(self, A, B, X, iK, iparams: dict, fparams: dict, bparams: dict, method: str, tracker):
        self.A, self.B, self.iK, self.X = A, B, iK, X
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method, self.tracker = method, tracker
        self.ivars = {"istep": 0, "converged_count": 0, "converged_end": 0, "iterations_left": iparams["niter"]}
        self.fvars: dict = {}
        self.bvars = {"force_stop": False}
        self.tvars: dict = {}
        self.E = self.S = self.R = self.P = None

    # -- the iteration ---------------------------------------------------------------------------
    def run(self) -> None:
        self._update()
        while not self._stop():
            self._update()

    def _stop(self) -> bool:
        return (bool(self.bvars.get("force_stop", False)) or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def _update(self) -> None:
        if self.ivars["istep"] == 0:
            self._start()
        else:
            self._step()
        self.ivars["iterations_left"] -= 1
        self.ivars["istep"] += 1
        if self.tracker is not None:
            self.tracker(self)

    def _start(self) -> None:
        from . import linalg

        X = self.X
        x_norm = float(linalg.vector_norm(X))
        self.fvars["X_norm"] = x_norm
        self.fvars["A_norm"] = float(linalg.vector_norm(self.A @ X)) / x_norm
        self.fvars["B_norm"] = float(linalg.vector_norm(_bmm(self.B, X))) / x_norm
        if self.method == "ortho":
            S = self._svqb(X, drop=False)
        else:
            S = X
        self._rayleigh_ritz(S, first=True)

    def _step(self) -> None:
        from . import cat

        nc = self.ivars["converged_count"]
        W = _bmm(self.iK, self.R[:, nc:])
        P = self.P
        blocks = [self.X]
        if self.method == "ortho":
            W = self._orthogonalize(W, self.X)
            if W.shape[1]:
                blocks.append(W)
            if P is not None and P.shape[1]:
                P = self._orthogonalize(P, cat(blocks, dim=1))
                if P.shape[1]:
                    blocks.append(P)
        else:
            blocks.append(W)
            if P is not None and P.shape[1]:
                blocks.append(P)
        self._rayleigh_ritz(cat(blocks, dim=1), first=False)

    def _rayleigh_ritz(self, S, first: bool) -> None:
        """The ``n`` wanted Ritz pairs of the span of ``S``; X, E, P, R and the converged count from them."""
        from . import linalg

        n = self.iparams["n"]
        A_S = self.A @ S
        T = S.mT @ A_S
        T = (T + T.mT) / 2
        if self.method == "ortho":
            theta, Z = linalg.eigh(T)
        else:  # Knyazev's basic method: the generalized problem through a Cholesky factor of S^T B S
            G = S.mT @ _bmm(self.B, S)
            L = linalg.cholesky((G + G.mT) / 2)
            C = linalg.solve_triangular(L, linalg.solve_triangular(L, T, upper=False).mT, upper=False).mT
            theta, Y = linalg.eigh((C + C.mT) / 2)
            Z = linalg.solve_triangular(L.mT, Y, upper=True)
        if self.bparams["largest"]:
            theta, Z = theta.flip(0), Z.flip(1)
        theta, Z = theta[:n], Z[:, :n]
        X = S @ Z
        if not first:
            nc = self.ivars["converged_count"]
            # the new directions: the part of each new active column outside the old X
            self.P = S[:, n:] @ Z[n:, nc:]
        self.S, self.X, self.E = S, X, theta
        self.R = A_S @ Z - _bmm(self.B, X) * theta
        self._count_converged()

    def _count_converged(self) -> None:
        from . import linalg

        X, E, R = self.X, self.E, self.R
        scale = linalg.vector_norm(X, dim=0) * (self.fvars["A_norm"] + E.abs() * self.fvars["B_norm"])
        rerr = linalg.vector_norm(R, dim=0) / scale
        flags = (rerr < self.fparams["tol"]).tolist()
        count = next((i for i, ok in enumerate(flags) if not ok), len(flags))  # the leading converged pairs
        self.ivars["converged_count"] = max(count, self.ivars["converged_count"])
        self.tvars["rerr"] = rerr

    # -- B-orthonormal bases ("ortho") --------------------------------------------------------------
    def _svqb(self, U, drop: bool):
        """U's columns B-orthonormalized by SVQB: scaled to unit B-norm, rotated onto the eigenvectors of their
        Gram matrix, divided by the square roots of its eigenvalues; with ``drop``, the directions whose eigenvalue
        falls below ``ortho_tol_drop`` times the largest are dropped."""
        from . import linalg

        BU = _bmm(self.B, U)
        G = U.mT @ BU
        d = G.diagonal().clamp_min(0).sqrt()
        scale = d.where(d > 0, d.new_ones(()))  # a zero column stays zero, and is dropped below
        G = G / scale[:, None] / scale[None, :]
        lam, Q = linalg.eigh((G + G.mT) / 2)
        keep = lam > self.fparams["ortho_tol_drop"] * lam.abs().max() if drop else lam > 0
        if not bool(keep.all()):
            lam, Q = lam[keep], Q[:, keep]
        return (U / scale) @ (Q / lam.sqrt())

    def _orthogonalize(self, U, V):
        """U B-orthogonalized against the B-orthonormal columns of V, then B-orthonormalized (Note [LOBPCG])."""
        from . import eye, linalg

        BV = _bmm(self.B, V)
        tau = self.fparams["ortho_tol"]
        for i in range(self.iparams["ortho_i_max"]):
            for _ in range(2):
                U = U - V @ (BV.mT @ U)
            U = self._svqb(U, drop=True)
            if U.shape[1] == 0:
                return U
            BU = _bmm(self.B, U)
            u_norm = float(linalg.vector_norm(U))
            err = float(linalg.vector_norm(BV.mT @ U)) / (float(linalg.vector_norm(BV)) * u_norm)
            self.ivars["ortho_i"] = i + 1
            self.fvars[f"ortho_VBU_rerr[{i}]"] = err
            if err < tau:
                break
        gram = U.mT @ BU
        identity = eye(gram.shape[0], dtype=gram.dtype, device=gram.device)
        self.fvars["ortho_UBUmI_rerr"] = float(linalg.vector_norm(gram - identity)) / (
            float(linalg.vector_norm(BU)) * u_norm)
        return U


class LOBPCGAutogradFunction(Function):
    """lobpcg as one differentiable step of A (Note [LOBPCG backward]); its node is torch's
    ``LOBPCGAutogradFunctionBackward``."""

    @staticmethod
    def forward(ctx, A, B, solve):
        E, U = solve(A, B)
        ctx.save_for_backward(A, E, U)
        ctx.has_B = B is not None
        return E, U

    @staticmethod
    def backward(ctx, gE, gU):
        if ctx.has_B:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        A, E, U = ctx.saved_tensors
        return _eigenspace_grad(A, E, U, gE, gU), None, None


def _eigenspace_grad(A, E, U, gE, gU):
    """The gradient of A for the partial eigendecomposition ``A U = U diag(E)`` (Note [LOBPCG backward])."""
    from . import eye, linalg

    C = U.mT @ gU
    gaps = E.unsqueeze(-2) - E.unsqueeze(-1)  # [j, i] = E_i - E_j
    F = (1 / gaps.where(gaps != 0, gaps.new_ones(()))).where(gaps != 0, gaps.new_zeros(()))
    G = U @ (gE.diag_embed() + C * F) @ U.mT
    m = A.shape[-1]
    projected = gU - U @ C  # (I - U U^T) gU
    shift = 1 + 2 * float(E.abs().max())
    identity = eye(m, dtype=A.dtype, device=A.device)
    M = A.unsqueeze(-3) - E[..., :, None, None] * identity + shift * (U @ U.mT).unsqueeze(-3)
    Y = linalg.solve(M, projected.mT.unsqueeze(-1)).squeeze(-1).mT  # (*, m, k): column i solves for pair i
    return G - Y @ U.mT


def _matrix(M, i: int):
    """Matrix ``i`` of a batch (a 2-D ``M`` serves every matrix), or None."""
    return None if M is None else (M if M.dim() == 2 else M.reshape(-1, *M.shape[-2:])[i])


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None, n: int | None = None,
           iK: Tensor | None = None, niter: int | None = None, tol: float | None = None, largest: bool | None = None,
           method: str | None = None, tracker=None, ortho_iparams: dict | None = None,
           ortho_fparams: dict | None = None, ortho_bparams: dict | None = None):
    """``(E, X)``: the ``k`` largest (``largest=False``: smallest) eigenvalues of the symmetric positive definite
    ``A x = E B x`` (``B`` None: the identity) and their eigenvectors, by LOBPCG (Note [LOBPCG]). ``A`` is
    ``(*, m, m)``; ``X`` an optional start ``(*, m, n)``; ``iK`` a preconditioner; ``niter`` the most updates (1000;
    -1 for no limit); ``tol`` the residual tolerance (the square root of the dtype's eps); ``method`` "ortho" or
    "basic"; ``tracker(worker)`` is called after every update (see :class:`LOBPCG`). Differentiable in A when ``B`` is
    None (Note [LOBPCG backward])."""
    from . import dtypes as dt
    from . import finfo, randn, stack
    from .dispatch.dispatcher import grad_mode

    arg_tensor("lobpcg", "A", None, A)
    check_args("lobpcg", ("k", None, k, "int?"), ("n", None, n, "int?"), ("niter", None, niter, "int?"),
               ("tol", None, tol, "float?"), ("largest", None, largest, "bool?"))
    if method is not None and not isinstance(method, str):
        raise TypeError(f"lobpcg(): argument 'method' must be str, not {type(method).__name__}")
    if tracker is not None and not callable(tracker):
        raise TypeError(f"lobpcg(): argument 'tracker' must be callable, not {type(tracker).__name__}")
    for name, M in (("B", B), ("X", X), ("iK", iK)):
        if M is not None:
            arg_tensor("lobpcg", name, None, M)
    if A.dim() < 2 or A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if A.dtype not in (dt.float32, dt.float64):
        raise TypeError(f"lobpcg: A must be float32 or float64, got {A.dtype}")
    for name, M in (("B", B), ("iK", iK)):
        if M is not None and M.shape != A.shape:
            raise AssertionError(f"A and {name} must have same shape, got {A.shape} vs {M.shape}")
    differentiable = grad_mode.enabled and (A.requires_grad or (B is not None and B.requires_grad))
    m = A.shape[-1]
    if k is None:
        k = 1 if X is None else X.shape[-1]
    if X is not None:
        if X.shape[:-1] != A.shape[:-1] or X.dim() != A.dim():
            raise AssertionError(f"X shape mismatch: got {X.shape}, expected {(*A.shape[:-1], X.shape[-1])}")
        n = X.shape[-1]
    elif n is None:
        n = k
    if k < 1:
        raise ValueError(f"lobpcg: k must be a positive int, got {k!r}")
    if n < k:
        raise ValueError(f"lobpcg: n (={n}), the number of columns of X, must be at least k (={k})")
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x "
                         f"the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    if method not in ("ortho", "basic"):
        raise ValueError(f"lobpcg: method must be 'ortho' or 'basic', got {method!r}")
    tol = float(finfo(A.dtype).eps) ** 0.5 if tol is None else float(tol)
    if niter is not None and niter < -1:
        raise ValueError(f"lobpcg: niter must be -1 (no limit) or a non-negative int, got {niter}")
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter,
               "ortho_i_max": 3, "ortho_j_max": 3, **(ortho_iparams or {})}
    fparams = {"tol": tol, "ortho_tol": tol, "ortho_tol_drop": tol, "ortho_tol_replace": tol, **(ortho_fparams or {})}
    bparams = {"largest": True if largest is None else largest, **(ortho_bparams or {})}

    def solve(A, B):
        batch = A.shape[:-2]
        flat = A.reshape(-1, m, m)
        values, vectors = [], []
        for i in range(flat.shape[0]):
            Xi = _matrix(X, i) if X is not None else randn(m, n, dtype=A.dtype, device=A.device)
            worker = LOBPCG(flat[i], _matrix(B, i), Xi.to(A.dtype), _matrix(iK, i), dict(iparams), dict(fparams),
                            dict(bparams), method, tracker)
            worker.run()
            values.append(worker.E[:k])
            vectors.append(worker.X[:, :k])
        if not batch:
            return values[0], vectors[0]
        return stack(values).reshape(*batch, k), stack(vectors).reshape(*batch, m, k)

    if not differentiable:
        return solve(A, B)
    A = (A + A.mT) / 2  # Note [LOBPCG backward]
    B = None if B is None else (B + B.mT) / 2
    return LOBPCGAutogradFunction.apply(A, B, solve)
