"""Links to a casino management system (PA 605a.5(a)): the interface the floor talks to
(:mod:`~tablejack.server.links.interface`) and the SAS gaming-machine side
(:mod:`~tablejack.server.links.sas`). docs/sas.md."""
