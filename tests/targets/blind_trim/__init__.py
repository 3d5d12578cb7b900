"""Blind trim targets in the OpenAI Chat dialect, written from contract §10 alone (see README.md).

``legit``: trimmers that obey every rule of §10 and declare their policies honestly.
``bugs``: trimmers that each break exactly one rule of §10 the way a real library might.
``_chat``: the message helpers both share (written from domain §5.5, not from ``ctxmodel.trimming``).
"""
