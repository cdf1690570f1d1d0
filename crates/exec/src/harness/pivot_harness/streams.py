"""The task's standard streams: the evaluators' swallow_io gives the code a StringIO that
refuses reads (stdin, stdout and stderr are that one object); its text is also copied to the
task's output pipe (capped) for the feedback and the editor."""

import io
import os


class TaskStream(io.StringIO):
    def __init__(self, cap):
        io.StringIO.__init__(self)
        self._left = cap

    def write(self, s):
        n = io.StringIO.write(self, s)
        if self._left > 0:
            b = s[: self._left].encode("utf-8", "replace")[: self._left]
            self._left -= len(b)
            try:
                os.write(1, b)
            except OSError:
                self._left = 0
        return n

    def read(self, *args, **kwargs):
        raise OSError

    readline = readlines = read

    def readable(self, *args, **kwargs):
        return False


class ClosedStdin(io.StringIO):
    """--fix-quirks: stdin at end of file (EOFError from input()), output still refused."""

    def readable(self, *args, **kwargs):
        return True
