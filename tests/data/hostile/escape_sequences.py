"""Defect 13: an error whose text clears the screen and turns it red must reach the terminal escaped."""
import tilelang

raise RuntimeError("\x1b[2J\x1b[31mgotcha\x07")
