"""The live model client and `chat` (extra `live`): they import the chapter, never back."""
