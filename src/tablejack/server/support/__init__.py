"""What every room uses: credentials, the protocol's messages, texts, JSON, TLS, structured logs, request bounds and the OpenAPI contract, the voucher ticket, the release's integrity."""
