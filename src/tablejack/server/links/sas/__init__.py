"""SAS (Slot Accounting System): framing and CRC (:mod:`.framing`, pure), the gaming machine
of a terminal (:mod:`.machine`), the serial and TCP lines (:mod:`.transport`), the floor's
link (:mod:`.link`) and a host-side poller for diagnostics and tests (:mod:`.poll`)."""
