"""What every command line tool (app/, scripts/) does with a user's mistake: a ValueError raised while it checks
its options, or while it loads what they name, is printed as one line ``error: <message>`` on stderr (the message
names the option and what is allowed) and the tool exits with status 2, without a traceback.

    from training.cli import user_errors

    @user_errors
    def main(argv=None) -> int:
        ...

Every other exception keeps its traceback: it is a bug, not a mistake in the options.
"""
from __future__ import annotations

import functools
import sys

USAGE_ERROR = 2  # the exit status of a command given bad options (argparse's too)


def print_error(message) -> int:
    """Prints ``error: <message>`` on stderr; returns USAGE_ERROR, the tool's exit status."""
    print(f"error: {message}", file=sys.stderr)
    return USAGE_ERROR


def user_errors(main):
    """Wraps a tool's ``main(argv=None) -> int``: a ValueError escaping it is printed by print_error and main
    returns USAGE_ERROR."""
    @functools.wraps(main)
    def wrapped(*args, **kwargs):
        try:
            return main(*args, **kwargs)
        except ValueError as e:
            return print_error(e)
    return wrapped
