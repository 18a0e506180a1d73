"""c10's ``ConfigTokenizer``: the lexer of ``PYTORCH_CUDA_ALLOC_CONF`` strings.

``"key1:val1,key2:[a:b,c:d]"`` becomes ``key1 : val1 , key2 : [ a : b , c : d ]``: keys and
values, plus the single characters ``, : [ ]``; whitespace is dropped.  Accessors raise
:class:`AllocatorConfigError` with c10's messages.
"""

from __future__ import annotations

__all__ = ["AllocatorConfigError"]


class AllocatorConfigError(ValueError, RuntimeError):
    """A malformed allocator settings string.

    c10 raises ``ValueError`` for some checks (``TORCH_CHECK_VALUE``) and ``RuntimeError`` for
    others (``TORCH_CHECK``); this error is both, so either ``except`` clause catches it.
    """


class _Tokens:
    """c10's ``ConfigTokenizer``: keys, values and the single characters ``, : [ ]``."""

    __slots__ = ("toks",)

    def __init__(self, env: str) -> None:
        toks: list[str] = []
        buf: list[str] = []
        for ch in env:
            if ch in ",:[]":
                if buf:
                    toks.append("".join(buf))
                    buf.clear()
                toks.append(ch)
            elif not ch.isspace():
                buf.append(ch)
        if buf:
            toks.append("".join(buf))
        self.toks = toks

    def __len__(self) -> int:
        return len(self.toks)

    def get(self, i: int) -> str:
        if i >= len(self.toks):
            raise AllocatorConfigError("Index out of bounds in ConfigTokenizer")
        return self.toks[i]

    def expect(self, i: int, token: str) -> None:
        if i >= len(self.toks) or self.toks[i] != token:
            raise AllocatorConfigError(
                f"Error parsing CachingAllocator::AllocatorConfig settings, expected {token}"
            )

    def to_int(self, i: int) -> int:
        tok = self.get(i)
        try:
            value = int(tok)
        except ValueError:
            raise AllocatorConfigError(
                f"Expected an integer at index {i} in ConfigTokenizer but got '{tok}'"
            ) from None
        if value < 0:
            raise AllocatorConfigError(f"Expected a non-negative integer at index {i} but got '{tok}'")
        return value

    def to_float(self, i: int) -> float:
        tok = self.get(i)
        try:
            return float(tok)
        except ValueError:
            raise AllocatorConfigError(
                f"Expected a number at index {i} in ConfigTokenizer but got '{tok}'"
            ) from None

    def to_bool(self, i: int) -> bool:
        tok = self.get(i)
        if tok == "True":
            return True
        if tok == "False":
            return False
        raise AllocatorConfigError(
            f"Expected 'True' or 'False' at index {i} in ConfigTokenizer but got '{tok}'"
        )
