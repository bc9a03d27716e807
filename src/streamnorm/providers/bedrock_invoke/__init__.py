"""``bedrock-invoke-stream``: Bedrock InvokeModelWithResponseStream, whose
chunks carry the events of the model vendor's own API."""

from .decoder import BedrockInvokeDecoder

__all__ = ["BedrockInvokeDecoder"]
