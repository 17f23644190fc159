"""Issue 20, class 5: a package whose kernel file imports a sibling relatively."""
