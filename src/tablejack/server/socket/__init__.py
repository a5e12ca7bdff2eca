"""The socket room: the terminals' WebSocket, its gate, sign-in and sequence numbers, the forwarding to the process that runs a table, the card reader's line, and the protocol's client."""
