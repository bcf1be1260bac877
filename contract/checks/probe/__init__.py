"""CC4xx: the dynamic probe (`rules`: the records; `run` gathers Dynamo's evidence, `check` judges it, `restore` puts
the model back)."""
