"""A plain-data copy of TileLang's TIR and the index algebra over it: no TVM object crosses this line."""
