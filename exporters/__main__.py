from exporters.cli import app

app(prog_name="wlmon")
