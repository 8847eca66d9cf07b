"""``python -m d3dkmddi_py`` and the ``d3dkmddi`` command (``d3dkmddi_py.__main__:main``).

The command's modules are imported inside ``main``, so Ctrl-C while they load is the same one line and
exit status 130 as Ctrl-C later (``guard.run_guarded``), not a traceback.
"""
import sys


def main(argv=None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and return its exit status."""
    try:
        from .cli import main as command
    except KeyboardInterrupt:
        try:
            sys.stderr.write("d3dkmddi: interrupted\n")  # the words and status of guard.run_guarded
            sys.stderr.flush()
        except (AttributeError, OSError, ValueError):
            pass
        return 130
    return command(argv)


if __name__ == "__main__":
    sys.exit(main())
