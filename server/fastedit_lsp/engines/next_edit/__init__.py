"""Next-edit suggestions: predict the user's next edit from their own recent edits.

``history`` keeps each document's user edits, ``predict`` is the offline engine (rename, added
argument, line rewrite), ``model_edit`` turns a model's rewrite of a window into edits.
"""
