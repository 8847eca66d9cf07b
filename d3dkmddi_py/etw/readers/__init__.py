"""The readers of a trace: tracerpt / Event Viewer XML, the .etl container (event by event, column-wise, its
summary) and its XPRESS-compressed buffers.  They give the model's Events; nothing here keeps a trace's state."""
