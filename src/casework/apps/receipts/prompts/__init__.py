"""The receipts agent's prompt files, rendered by ``casework.runtime.prompts.load_prompt``."""
