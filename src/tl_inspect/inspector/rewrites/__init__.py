"""Rewrites of a kernel's frontend PrimFunc that remove one cause of a narrow or uncoalesced access,
for the proofs."""
