"""Live play in the browser: the local web server of ``python -m app.web``, its games against agents, the draft page.

Above the simulation and the agents (it plays games with them) and below the CLIs (app/web.py starts it)."""
