"""Starting the service: the composition root, the app it wires, and the process around it.

Settings in, adapters, services and workers wired (:mod:`.bootstrap`), the Starlette
application over them (:mod:`.app`), and ``ecp serve`` in one or N processes
(:mod:`.serve`, :mod:`.serve_workers`), with what start-up needs: the database and its
migrations, development secrets, action plug-ins, the hosted adapters, and how a command
or a start-up refuses (:mod:`.exits`). The command line reaches the server through here.
"""
