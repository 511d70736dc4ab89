"""Built-in casework apps: one package per app, each exposing ``APP = AppSpec(...)``."""
