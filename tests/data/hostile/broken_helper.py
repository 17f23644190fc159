"""Issue 20, class 6: imported by imports_a_broken_helper.py; line 3 is a syntax error."""

def helper(:
    pass
