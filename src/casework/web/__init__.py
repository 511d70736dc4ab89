"""web: the review inbox, decision pages, live runs and evaluation runs at ``/`` of the server.

``mount_web(app, settings)`` (called by ``casework.server.create_app``) adds the pages; each
app contributes its review items through ``AppSpec.review`` (``casework.runtime.review_provider``).
"""

from casework.web.pages import WebState, mount_web

__all__ = ["WebState", "mount_web"]
