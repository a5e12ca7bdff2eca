"""The `tablejack` commands of the table server: serve, verify-log, recall, keys and tokens, sas-poll, the release's integrity, the demo floor."""
