import json


from jobs_ingest.adapters import Rejected, k8s

from jobs_ingest.management.ingest_command import IngestCommand, open_input


class Command(IngestCommand):
    name = "ingest_k8s"
    help = ("Ingest Kubernetes Jobs, Pods and Kubeflow PyTorchJobs from `kubectl get jobs,pods,pytorchjobs -o json` "
            "output (one or more FILEs, - for standard input) with container logs from --logs DIR "
            "(<pod>.log, <pod>_<container>.log, and .previous.log for restarts). See docs/platforms/kubernetes.md.")

    def add_arguments(self, parser):
        parser.add_argument("--objects", required=True, nargs="+", metavar="FILE",
                            help="kubectl -o json output: a List or one object per file; - reads standard input")
        parser.add_argument("--logs", metavar="DIR", help="folder of `kubectl logs` files (searched recursively)")
        self.add_wait_arguments(parser)

    def handle(self, objects, logs, wait, timeout, verbosity=1, **options):
        logs_index = self.log_index(logs, k8s.PodLogIndex)
        documents, unreadable = [], []
        for path in objects:
            stream = open_input(path)
            try:
                documents.append(json.loads(stream.read().decode("utf-8", errors="replace")))
            except (ValueError, RecursionError) as exc:
                unreadable.append(Rejected(path, f"invalid JSON: {str(exc)[:200]}"))
            finally:
                if path != "-":
                    stream.close()
        items = unreadable + list(k8s.read_objects(documents, logs_index))
        self.store(items, len(items), wait=wait, timeout=timeout, verbosity=verbosity)
