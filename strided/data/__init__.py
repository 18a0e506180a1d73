"""Text shipped with strided for the demo.

``shakespeare.txt``: the opening of William Shakespeare's *Coriolanus* (public domain), about
50 KB, in the form of the tiny-shakespeare corpus (speaker lines, blank lines between speeches).
"""
