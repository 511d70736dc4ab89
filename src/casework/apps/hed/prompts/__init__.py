"""Prompt files of the hed app (``*.md``), read with ``casework.runtime.prompts.load_prompt``."""
