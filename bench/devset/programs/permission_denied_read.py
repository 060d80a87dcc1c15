# category: permission_denied
# stage: data_preprocessing
# as_user: nobody
with open("/etc/shadow") as f:  # a root-only file standing for a dataset readable by its owner only
    print(f.readline())
