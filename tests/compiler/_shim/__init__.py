"""A cffi-compiled C shim that asks a real compiler where every leaf lives.

Test infrastructure only, so it lives under tests/.  ``build.load()`` compiles the
package's headers (headers/, one translation unit per interface version, ``-mms-bitfields`` on x86)
and returns a ``Shim`` whose methods read the C side's answers.
"""
