"""``bedrock-converse-stream``: everything that knows the Bedrock ConverseStream wire JSON."""

from .decoder import BedrockConverseDecoder

__all__ = ["BedrockConverseDecoder"]
