"""What every simulated phone shares, whatever game it shows: the phone base, screen
sizes, the adb daemon that puts a phone on the wire, launching one as a process, and
fleets of them for farms. Imports only `agent.device`; each game's screen lives in its
game's folder."""
