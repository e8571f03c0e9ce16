"""The live model client and `chat` (extra `live`): the chapter's loop against a real server.

Beyond the chapter: these import the chapter's modules, never the other way round.
"""
