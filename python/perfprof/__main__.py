"""``python -m perfprof``: the perfprof command."""
from perfprof.cli import main

main()
