"""The floor's duties under PA Chapter 605a: tilts and lock-out, card inventory, player protections, the terminal features, game recall."""
