"""The sql app's prompt files, rendered by ``casework.runtime.prompts.load_prompt``."""
