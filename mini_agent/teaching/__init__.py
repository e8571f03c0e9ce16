"""The notebooks' apparatus: views, the scan trace, explorers, exercises, samples, the demo.

Beyond the chapter: these import the chapter's modules, never the other way round.
"""
