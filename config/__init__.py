"""The project package: settings, the URLconf, the WSGI entry point, the API root and the
middleware. It names the apps and wires them together; the apps never import it."""
