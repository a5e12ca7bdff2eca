"""The HTTP room: the REST routers, one per concern, the pages, /metrics, /healthz and /readyz, and the routers' permission check."""
