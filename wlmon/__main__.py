from wlmon.cli import app

app(prog_name="wlmon")
