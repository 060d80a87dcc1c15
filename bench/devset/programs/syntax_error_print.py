# category: syntax_error
# stage: initialization
# Python 2 code run with Python 3
import sys

print "loading data from", sys.argv
