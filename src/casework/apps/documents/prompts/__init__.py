"""Prompt files of the documents app (``*.md``), read with ``casework.runtime.prompts.load_prompt``."""
