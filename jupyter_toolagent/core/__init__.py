"""The UI-independent core: tools, scheduling, the query loop, transcript rules.

Never imports IPython or ipywidgets (a test guards this wall).
"""
