"""The HTTP surface: operations and their routing, handlers, auth, sessions, problems, pages.

Handlers are plain functions ``handler(call, services)`` declared once per route
(:mod:`.routing`); the composition root (:mod:`ecp_http.startup.bootstrap`) wires them.
"""
