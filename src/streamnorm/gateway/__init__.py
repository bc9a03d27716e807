"""The translating gateway: any of the four request APIs in front, any behind.

``create_app(config)`` returns the ASGI application; ``streamnorm serve``
runs it under uvicorn (``serve.py``). Needs the ``gateway`` extra
(``pip install 'streamnorm[gateway]'``). Deployment: ``docs/gateway.md``.
"""

from .app import Gateway, create_app
from .config import GatewayConfig, Route, Upstream, load_config, parse_config

__all__ = [
    "Gateway",
    "GatewayConfig",
    "Route",
    "Upstream",
    "create_app",
    "load_config",
    "parse_config",
]
