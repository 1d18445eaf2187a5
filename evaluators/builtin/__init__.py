"""Built-in evaluators.

They register through the ``evald.evaluators`` entry-point group in
``pyproject.toml``, the same door as third-party plug-ins; nothing here is
imported by name elsewhere.
"""
