"""The floor room: the tables one process runs, its sockets and balance cache, and the leases that share tables among processes."""
