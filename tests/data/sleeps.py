import time

import tilelang

time.sleep(60)
