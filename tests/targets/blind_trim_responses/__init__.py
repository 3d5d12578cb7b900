"""Blind trim targets in the OpenAI Responses dialect, written from contract §10 alone (see README.md).

``legit``: trimmers that obey every rule of §10 and §10.8 and declare their policies honestly.
``bugs``: trimmers that each break exactly one rule the way a real library might.
``_items``: the item helpers both share (written from domain §5.7 and §5.8, not from ``ctxmodel.trimming``).
"""
