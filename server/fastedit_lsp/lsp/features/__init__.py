"""LSP surfaces, one module each; each registers its handlers with ``register(server, ...)``,
handed the owners it uses (documents, client channel, jobs, settings, backends...) by the
composition root (``lsp.server.register_all``): no feature names the server's class.
"""
