import tilelang

def broken(:
    pass
