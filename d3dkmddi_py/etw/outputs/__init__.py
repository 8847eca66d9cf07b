"""What a trace is written as: the text, the tables, the picture and the ``d3dkmddi etw`` command."""
