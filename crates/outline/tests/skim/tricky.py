"""Module doc: what the skimming lexer must read right."""
import os


class A:
    """Doc of A."""

    def f(self):
        """Doc of f."""
        x = '''
def not_a_def():
    pass
'''
        return x + os.sep

    # Comment doc of g.
    def g(self):
        if self:
            return 1
        return 2

    async def h(self): return 3

    @property
    def i(self):
        y = [
    1,
        2]
        return y  # trailing comment


def top(a,
        b):
    y = (a,
  b)
    z = "def fake(): pass"
    return y, z


CONSTANT = 3
