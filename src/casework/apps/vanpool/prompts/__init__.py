"""The vanpool agents' prompts and email templates, rendered by ``casework.runtime.prompts.load_prompt``."""
